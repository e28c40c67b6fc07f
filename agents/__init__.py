"""Agents for Go-Stop. All implement the one policy interface of :mod:`gostop_env.policy`.

- :mod:`gostop.agents.greedy`: :class:`SimpleGreedy` and :class:`Greedy` card-play baselines.
- :mod:`gostop.agents.go_stop`: go/stop rules (always stop, thresholds) for any card player.
- :mod:`gostop.agents.search`: :class:`SearchAgent`, determinized Monte-Carlo search.
- :mod:`gostop.agents.registry`: :func:`make_agent` builds an agent from a name such as
  ``greedy:stop=threshold:k=3``.
- :mod:`gostop.agents.match`: play hands between policies and compare two over duplicate deals.
"""

from .compare import compare
from .go_stop import AlwaysStop, Threshold
from .greedy import Greedy, SimpleGreedy
from .match import play_hands
from .registry import make_agent
from .search import SearchAgent

__all__ = ["AlwaysStop", "Greedy", "SimpleGreedy", "Threshold", "compare", "make_agent", "play_hands", "SearchAgent"]
