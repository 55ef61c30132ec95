"""Experiments that compose sibling stages: the label-source comparison reads the labeling audit, builds training
sets, trains a PRM per label source and evaluates each. No stage imports this package. (The RL arms and search at
equal budgets stay in ``prm.rl`` and ``prm.search``: each runs one stage over the layers below it.)"""
