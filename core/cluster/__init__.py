"""Ray: connecting to a cluster (connect), its nodes and their devices (nodes), jobs run on a node (remote).

Nothing here is imported unless TFDASH_RAY_ADDRESS (or --ray) names a cluster or a job names a node:
`import ray` costs about a second and a page's first render never waits for it.
"""
