package apart

// spacersPerChan is how many spacers follow each channel.
const spacersPerChan = 2

// Chans makes n channels of capacity size, each followed by spacers of
// the same kind, returned for the caller to keep.
func Chans[T any](n, size int) (chans []chan T, spacers []chan T) {
	for range n {
		chans = append(chans, make(chan T, size))
		for range spacersPerChan {
			spacers = append(spacers, make(chan T))
		}
	}
	return chans, spacers
}
