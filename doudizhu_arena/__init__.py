"""The judges: play agents against each other and say, with intervals, who is better.

- :mod:`doudizhu_arena.arena`: duplicate deals between line-ups, WP and ADP with 95% intervals;
- :mod:`doudizhu_arena.tournament`: round-robin tournaments with ratings and a cache of cells;
- :mod:`doudizhu_arena.sprt`: a sequential test, "is the candidate better than the baseline?";
- :mod:`doudizhu_arena.evaluation`: a trained agent against the baselines (used by training);
- :mod:`doudizhu_arena.evaluate`: the command line (``python -m doudizhu_arena.evaluate``);
- :mod:`doudizhu_arena.ray_arena` and :mod:`doudizhu_arena.cluster`: the same work on a Ray cluster.

This floor sits above the players (:mod:`agents`, which it builds from specs) and the game
(:mod:`doudizhu_env`); training (:mod:`train`) and the tables for people sit above it.
"""
