package netns

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	vnetns "github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Deleting a namespace name when /run/netns was mounted over.
//
// A name is a file /run/netns/<name> with the namespace (nsfs) mounted
// on it. `ip netns add`, run by anyone while /run/netns is a plain
// directory, makes /run/netns a mount point: it bind-mounts the
// directory onto itself (recursively, so the copy carries copies of the
// names' mounts) and makes it shared. From then on a name made before is
// two mounts: the copy on top, and the original underneath, which no
// path reaches. Unmounting the visible one leaves the hidden one, the
// file cannot be removed (EBUSY: still a mount point in this mount
// namespace), and the next attempt finds no visible mount (EINVAL). The
// namespace stays alive, and a later run that finds the name stale fails
// to delete it.
//
// deleteName then removes the name from a private mount namespace: a
// copy of the mount table on a thread of its own, with no propagation
// back. There it takes off the mounts in the way (the visible one, then
// the /run/netns mount that hides the one underneath, as often as they
// are stacked) and removes the file. Removing a file detaches the mounts
// on it in every mount namespace (Linux 3.18 and later), so the hidden
// mount in the harness's own namespace goes too, and with it the
// namespace, once no process runs in it. Nothing else changes outside
// the private copy: the /run/netns mount and every other name in it stay
// as they were.

// maxMountLayers bounds the mounts taken off one name: each `ip netns
// add` onto a plain /run/netns adds one layer, and a real machine has
// one or two.
const maxMountLayers = 16

// deleteName removes /run/netns/<name> with every mount on it, hidden
// ones included. It returns the inodes of the namespaces it found mounted
// only underneath another mount (their processes were not visible to a
// search by path), and an error that says how to remove the name by hand
// when it cannot.
func deleteName(name string) ([]uint64, error) {
	err := vnetns.DeleteNamed(name)
	switch {
	case err == nil || errors.Is(err, os.ErrNotExist):
		return nil, nil
	case !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.EBUSY):
		return nil, fmt.Errorf("delete namespace %s: %w", name, err)
	}
	hidden, perr := deleteFromPrivateMounts(name)
	if perr != nil {
		return hidden, fmt.Errorf("delete namespace %s: %v; then, from a private mount namespace: %w. "+
			"/run/netns was probably mounted over while the name was in use (as `ip netns add` does to a plain /run/netns), hiding the namespace's mount; "+
			"remove it by hand as root with: unshare -m sh -c 'umount -l %s; umount -l %s; rm %s'",
			name, err, perr, netnsDir, filepath.Join(netnsDir, name), filepath.Join(netnsDir, name))
	}
	return hidden, nil
}

// deleteFromPrivateMounts removes the name on a thread that leaves the
// harness's mount namespace for a private copy (offMainThread).
func deleteFromPrivateMounts(name string) ([]uint64, error) {
	var hidden []uint64
	var err error
	offMainThread(func() { hidden, err = unlinkThroughLayers(name) })
	return hidden, err
}

// offMainThread runs f on a thread of its own that is never unlocked, so
// that the thread, which f moves into another mount namespace, ends with
// f's goroutine and no other goroutine ever runs there. That thread is
// never the process's main thread: the runtime never ends that one, and
// /proc/self shows the process through it.
func offMainThread(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		if unix.Gettid() != unix.Getpid() {
			f()
			return // locked: the thread goes with the goroutine
		}
		offMainThread(f) // runs elsewhere: this thread is taken
		runtime.UnlockOSThread()
	}()
	<-done
}

// unlinkThroughLayers runs on a locked thread: it moves the thread into a
// private copy of the mount table, takes off the mounts on the name and
// the /run/netns mounts that hide others, and removes the name through
// the directory as the harness saw it.
func unlinkThroughLayers(name string) ([]uint64, error) {
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return nil, fmt.Errorf("unshare the mount namespace: %w", err)
	}
	// Unmounts here must not propagate to the harness's namespace.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return nil, fmt.Errorf("make the private mounts private: %w", err)
	}
	// The directory as the harness sees it: the name to remove is this
	// one, whatever is mounted over or under it.
	dir, err := unix.Open(netnsDir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", netnsDir, err)
	}
	defer unix.Close(dir)
	path := filepath.Join(netnsDir, name)
	var hidden []uint64
	for layer := 0; layer < maxMountLayers; layer++ {
		err := unix.Unlinkat(dir, name, 0)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return hidden, nil
		}
		if !errors.Is(err, unix.EBUSY) {
			return hidden, fmt.Errorf("remove %s: %w", path, err)
		}
		// Still a mount point: take off the visible mount on it, or, when
		// none is visible, the /run/netns mount that hides it.
		if ino, ok := nsfsInode(path); ok {
			hidden = append(hidden, ino)
		}
		if unix.Unmount(path, unix.MNT_DETACH) == nil {
			continue
		}
		if err := unix.Unmount(netnsDir, unix.MNT_DETACH); err != nil {
			return hidden, fmt.Errorf("%s is a mount point that no path reaches, and %s cannot be unmounted in a private copy: %w", path, netnsDir, err)
		}
	}
	return hidden, fmt.Errorf("%s still a mount point after taking off %d mounts", path, maxMountLayers)
}

// nsfsInode is the inode of the namespace mounted at path, if one is.
func nsfsInode(path string) (uint64, bool) {
	var fs unix.Statfs_t
	var st unix.Stat_t
	if unix.Statfs(path, &fs) != nil || fs.Type != unix.NSFS_MAGIC || unix.Stat(path, &st) != nil {
		return 0, false
	}
	return st.Ino, true
}
