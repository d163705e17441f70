# Sourced by the device scripts that run PyTorch jobs: the Python and torchrun of the GPU
# machine, NCCL's library from the pip package on LD_LIBRARY_PATH, multicast off (the
# machines' NVLink multicast must stay unused), and the GPU count (at most 4).
PY="${PYTHON:-/opt/torch/.venv/bin/python3}"
[ -x "$PY" ] || PY=$(command -v python3)
TORCHRUN="$(dirname "$PY")/torchrun"
[ -x "$TORCHRUN" ] || TORCHRUN=torchrun
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 OMP_NUM_THREADS=4
NCCL_LIB=$("$PY" -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib'))" 2>/dev/null)
CU13_LIB=$("$PY" -c "import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], 'cu13', 'lib'))" 2>/dev/null)
export LD_LIBRARY_PATH="$NCCL_LIB:$CU13_LIB:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}"
NGPU=${NGPU:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')}
[ "$NGPU" -gt 4 ] && NGPU=4
