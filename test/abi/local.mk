# The library's exported symbols against the API of include/vcoll.h.
TESTS += test/abi/exports.sh
EXTRA_DIST += test/abi/exports.sh
