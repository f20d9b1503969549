package netns

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Capability bits (linux/capability.h).
const (
	capNetAdmin = 12
	capSysAdmin = 21
)

// Check reports whether this process can build a lab: nil, or an error
// that wraps ErrUnsupported or ErrNeedRoot and says what is missing. The
// real-network test needs root; a caller fails loudly with this error
// rather than skipping.
func Check() error {
	if _, err := os.Stat("/proc/self/ns/net"); err != nil {
		return fmt.Errorf("%w: this kernel shows no network namespaces (/proc/self/ns/net: %v; CONFIG_NET_NS)", ErrUnsupported, err)
	}
	eff, err := effectiveCaps()
	if err != nil {
		return fmt.Errorf("%w: cannot read this process's capabilities: %v", ErrNeedRoot, err)
	}
	var missing []string
	if eff&(1<<capSysAdmin) == 0 {
		missing = append(missing, "CAP_SYS_ADMIN (to create and enter network namespaces)")
	}
	if eff&(1<<capNetAdmin) == 0 {
		missing = append(missing, "CAP_NET_ADMIN (for links, addresses and nftables rules)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: this process (uid %d) lacks %s; run the real-network test as root (e.g. with sudo)",
			ErrNeedRoot, os.Geteuid(), strings.Join(missing, " and "))
	}
	return nil
}

// effectiveCaps is CapEff from /proc/self/status.
func effectiveCaps() (uint64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "CapEff:"); ok {
			return strconv.ParseUint(strings.TrimSpace(rest), 16, 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("/proc/self/status has no CapEff line")
}
