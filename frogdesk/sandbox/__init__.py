"""Shell confinement: the levels, the policy, the supervisor, limits and the shells."""
