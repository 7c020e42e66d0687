"""Test-only settings for the peer's tests: they ask whether they run on
numba's CUDA simulator. gpujit is not that simulator, on either target.
Other numba settings are absent on purpose (tests that set them fail)."""
ENABLE_CUDASIM = 0
