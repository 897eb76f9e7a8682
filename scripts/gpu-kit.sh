#!/usr/bin/env bash
# gpu-kit.sh KIT_DIR BUILD_DIR
#
# Packs a self-contained run kit for a borrowed GPU machine that has CUDA
# (via a PyTorch venv) but none of our Debian libraries and no OpenMPI:
#   KIT_DIR/payload.tar.gz  bin/     stripped eppsim, eppsim-run, eppsim-bench,
#                                    runtime_cuda_*test, runtime_cudnn_*test from BUILD_DIR
#                           lib/     every shared lib they (and OpenMPI) need per
#                                    ldd, minus glibc and minus CUDA (libcudart,
#                                    libcublas*, libnccl, libnvrtc, libcudnn*, libcuda),
#                                    which come from the device's torch venv
#                           ompi/    Debian's OpenMPI 4.1 (mpirun/orterun/orted,
#                                    MCA plugins, help files, PMIx), relocatable
#   KIT_DIR/env.sh          `source KIT_DIR/env.sh` on the device: unpacks the
#                           payload (once, to /tmp/eppsim-kit_...), sets PATH,
#                           LD_LIBRARY_PATH, OPAL_PREFIX & co and OMPI_MCA_* for
#                           a single node (self/vader/tcp on lo, oversubscribe).
# The tree is packed as one .tar.gz to stay under the ~50 MiB carry limit.
# Set GPU_KIT_NOPACK=1 to leave bin/ lib/ ompi/ unpacked instead.
set -euo pipefail

[[ $# -eq 2 ]] || { sed -n '2,19s/^# \{0,1\}//p' "$0" >&2; exit 2; }
KIT=$(realpath -m "$1"); BUILD=$(realpath "$2")
ML=/usr/lib/x86_64-linux-gnu
OMPI=$KIT/ompi
# Plugins that drag in RDMA/UCX/PSM/OpenSHMEM stacks: left out (and disabled in env.sh).
SKIP_PLUGINS='ucx|ofi|openib|psm|verbs|usnic|/mca_(atomic|memheap|scoll|spml|sshmem)_'
# glibc family and CUDA libs: never packed.
SKIP_LIBS='^(linux-vdso|ld-linux.*|lib(c|m|dl|pthread|rt|util|resolv)|libcuda|libcudart|libcublas|libcublasLt|libnccl|libnvrtc.*|libcudnn.*)\.so'

[[ ! -e $KIT || -f $KIT/env.sh || -z $(ls -A "$KIT") ]] ||
  { echo "gpu-kit: $KIT is not empty and not a kit; refusing to wipe it" >&2; exit 1; }
rm -rf "$KIT"; mkdir -p "$KIT"/{bin,lib} "$OMPI"/usr/bin "$OMPI"/etc
shopt -s nullglob

progs=("$BUILD"/sim/eppsim "$BUILD"/runtime/eppsim-run "$BUILD"/runtime/eppsim-bench
       "$BUILD"/tests/runtime/runtime_cuda_*test "$BUILD"/tests/runtime/runtime_cudnn_*test)
for p in "${progs[@]}"; do
  [[ -x $p ]] || { echo "gpu-kit: missing $p" >&2; exit 1; }
  strip -o "$KIT/bin/$(basename "$p")" "$p"
done

# --- OpenMPI (Debian 12: openmpi-bin, libopenmpi3, openmpi-common, libpmix2) ---
for b in orterun orted ompi_info; do cp -L /usr/bin/$b "$OMPI/usr/bin/"; done
ln -s orterun "$OMPI/usr/bin/mpirun"; ln -s orterun "$OMPI/usr/bin/mpiexec"
plugins=()
while read -r f; do
  [[ $f =~ $SKIP_PLUGINS ]] && continue
  mkdir -p "$OMPI$(dirname "$f")"; cp -L "$f" "$OMPI$f"; plugins+=("$f")
done < <(dpkg -L libopenmpi3 libpmix2 | grep -E '/(openmpi3|pmix)/[^/]*\.so$')
mkdir -p "$OMPI/usr/share" "$OMPI$ML/pmix2"
cp -a /usr/share/openmpi "$OMPI/usr/share/"
cp -a /etc/openmpi "$OMPI/etc/"
[[ -d $ML/pmix2/share ]] && cp -a "$ML/pmix2/share" "$OMPI$ML/pmix2/"

# --- shared libraries (transitive closure per ldd) ---
ldd "${progs[@]}" /usr/bin/orterun /usr/bin/orted /usr/bin/ompi_info "${plugins[@]}" 2>/dev/null |
  awk '$2 == "=>" { print $1, $3 }' | sort -u |
  while read -r name path; do
    [[ $name =~ $SKIP_LIBS ]] && continue
    [[ $path == "not" ]] && { echo "gpu-kit: $name not found" >&2; exit 1; }
    [[ -e $KIT/lib/$name ]] || cp -L "$path" "$KIT/lib/$name"
  done

# --- env.sh (sourced on the device; must never exit the caller's shell) ---
cat > "$KIT/env.sh" <<'EOF'
# source this file: sets up the eppsim GPU kit (see scripts/gpu-kit.sh)
_k=$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")" && pwd)
if [ -f "$_k/payload.tar.gz" ]; then  # packed kit: unpack outside the tree (it is carried)
  _p=$_k/payload.tar.gz; _k=${TMPDIR:-/tmp}/eppsim-kit$(printf %s "$_k" | tr / _)
  if [ ! -x "$_k/bin/eppsim" ] || [ "$_p" -nt "$_k/.unpacked" ]; then
    { mkdir -p "$_k" && tar -xzf "$_p" -C "$_k" && touch "$_k/.unpacked"; } ||
      { echo "gpu-kit: cannot unpack $_p into $_k" >&2; unset _k _p; return 1; }
  fi
fi
[ -x "$_k/bin/eppsim" ] || { echo "gpu-kit: no kit in $_k" >&2; unset _k _p; return 1; }
_o=$_k/ompi _ml=ompi/usr/lib/x86_64-linux-gnu
_ld=$_k/lib
for _d in /opt/torch/.venv/lib/python3*/site-packages/nvidia/*/lib \
          /opt/torch/.venv/lib/python3*/site-packages/nvidia/cu13/lib; do
  [ -d "$_d" ] && case ":$_ld:" in *":$_d:"*) ;; *) _ld=$_ld:$_d ;; esac
done
export PATH=$_k/bin:$_o/usr/bin:$PATH
export LD_LIBRARY_PATH=$_ld${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OPAL_PREFIX=$_o/usr OPAL_SYSCONFDIR=$_o/etc/openmpi
export PMIX_PREFIX=$_k/$_ml/pmix2 PMIX_PKGLIBDIR=$_k/$_ml/pmix2/lib/pmix
export PMIX_PKGDATADIR=$_k/$_ml/pmix2/share/pmix PMIX_SYSCONFDIR=$_k/$_ml/pmix2/share
export PMIX_MCA_mca_base_component_path=$PMIX_PKGLIBDIR
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp OMPI_MCA_mtl='^ofi,psm,psm2'
export OMPI_MCA_osc='^ucx,pt2pt' OMPI_MCA_btl_base_warn_component_unused=0
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_hwloc_base_binding_policy=none
unset _k _p _o _ml _ld _d
EOF

if [[ ${GPU_KIT_NOPACK:-0} != 1 ]]; then
  tar -czf "$KIT/payload.tar.gz" -C "$KIT" bin lib ompi
  rm -rf "${KIT:?}"/{bin,lib,ompi}
fi
du -sh "$KIT"
