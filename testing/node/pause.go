// The pod sandbox's only process: it holds the pod's namespaces open and does nothing else. As
// PID 1 it must exit on SIGTERM and SIGINT itself (the kernel ignores signals PID 1 does not
// handle) and reap the children that namespaces sharing a PID space leave to it.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range signals {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
