//go:build unix && !linux

package harness

// maxRSSUnit is the unit of getrusage's ru_maxrss: bytes on macOS (the
// BSDs count KiB; their figures read 1024 times too small).
const maxRSSUnit = 1
