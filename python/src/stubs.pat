# nanobind stubgen pattern file: what kiln/session.py and kiln/_api.py add to the bound classes
# in Python, so that the type stubs (_kiln.pyi) show it.
Tensor.__dlpack_device__$:
    def __dlpack_device__(self) -> tuple[int, int]: ...

    def __dlpack__(self, *, stream: int | None = None, max_version: tuple[int, int] | None = None, dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> object:
        """
        DLPack export: torch.from_dlpack(t), np.from_dlpack(t) and cupy.from_dlpack(t) take the
        tensor without a copy. A tensor produced on a user's stream is given out on that stream
        only (kiln has no cross-stream events yet): UnsupportedError otherwise.
        """

    def numpy(self) -> NDArray:
        """A NumPy copy on the host (bf16: ml_dtypes.bfloat16, or uint16 bits without it)."""

    def __array__(self, dtype: object = None, copy: bool | None = None) -> NDArray: ...

    @property
    def __cuda_array_interface__(self) -> dict:
        """CUDA tensors only: the __cuda_array_interface__ (v3) of its memory."""

ICudaEngine.num_io_tensors$:
    @property
    def num_io_tensors(self) -> int: ...

    @property
    def io_tensor_names(self) -> list[str]:
        """Every input and output name, inputs first."""

    def __len__(self) -> int: ...

IExecutionContext.get_tensor_address$:
    def get_tensor_address(self, name: str) -> int:
        """The address bound to an input or output (0 if none)."""

    def execute_async_v3(self, stream_handle: object = 0) -> None:
        """TensorRT's name for execute_async."""
