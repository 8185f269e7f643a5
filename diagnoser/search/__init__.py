"""The fast search: find, in big byte blocks, the few lines that hold a literal some rule needs."""
