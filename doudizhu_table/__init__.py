"""Tables for people: play against agents, or watch recorded games.

- :mod:`doudizhu_table.session`: what happens at a table as events, which both tables render;
- :mod:`doudizhu_table.terminal`: a person against two agents at a terminal (``doudizhu-play``);
- :mod:`doudizhu_table.web`: the same in a browser, and a replay viewer (``doudizhu-web``);
- :mod:`doudizhu_table.replay`: recorded games printed move by move.

The top floor: it hosts agents (:mod:`agents`), so nothing below imports it.
"""
