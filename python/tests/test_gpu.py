"""The GPU checks of gpu_check.py under pytest: torch tensors in and out of a CUDA session
without a host copy, on a user's stream, against the CPU. Skipped without a GPU or torch."""

import pytest

import kiln

torch = pytest.importorskip("torch", reason="the GPU checks use PyTorch")
pytestmark = pytest.mark.skipif(
    not kiln.has_cuda() or not torch.cuda.is_available(),
    reason=f"no CUDA GPU: {kiln.device_count('cuda')[1] or 'torch sees none'}")

import gpu_check  # noqa: E402


@pytest.mark.parametrize("check", gpu_check.CHECKS, ids=lambda c: c.__name__[6:])
def test_gpu(check):
    print(check())
