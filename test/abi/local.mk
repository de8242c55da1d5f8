# The library's exported symbols against the API of include/vcoll.h.
TESTS += test/abi/exports.sh
EXTRA_DIST += test/abi/exports.sh
# The layer order of doc/architecture.md, by symbols and #includes; known
# debt in layers.debt (#24), which may only shrink.
TESTS += test/abi/layers.sh
EXTRA_DIST += test/abi/layers.sh test/abi/layers.debt doc/architecture.md
