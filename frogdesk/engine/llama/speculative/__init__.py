"""Speculative decoding: drafters (n-gram, MTP head) and the policy that decides when to draft."""
