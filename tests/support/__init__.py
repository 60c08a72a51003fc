"""What tests share that is not a fixture (fixtures live in tests/conftest.py): paths, the tiny
hand-written corpus, the plain-Python reference scorers and CLI helpers."""
