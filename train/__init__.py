"""Training scripts for Go-Stop agents: filled in with the training issue."""
