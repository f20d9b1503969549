package harness

// maxRSSUnit is the unit of getrusage's ru_maxrss: KiB on Linux.
const maxRSSUnit = 1024
