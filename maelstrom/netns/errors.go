package netns

import "errors"

// ErrNeedRoot is wrapped by every error that comes from missing
// privileges: building a lab needs CAP_SYS_ADMIN and CAP_NET_ADMIN.
var ErrNeedRoot = errors.New("the real network (--network netns) needs root")

// ErrUnsupported is wrapped by every error that comes from the system
// itself: not Linux, or a kernel without network namespaces.
var ErrUnsupported = errors.New("the real network (--network netns) needs Linux network namespaces")
