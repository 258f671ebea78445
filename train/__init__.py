"""Self-play training of the whole game by a learner (DMC or PPO: :mod:`train.learner`), logged and
evaluated as it goes (:mod:`train.run`)."""
