// The real node's cluster DNS: CoreDNS with only the plugins a cluster's DNS needs here, so that it
// builds without the cloud providers' SDKs its full plugin set compiles. The kubernetes plugin
// answers cluster.local from the API server; nothing forwards, so no name ever leaves the machine.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/caddy/onevent"
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/ready"
)

func init() {
	// The order plugins run in, as CoreDNS's own list orders them.
	dnsserver.Directives = []string{"bind", "ready", "errors", "cache", "kubernetes"}
}

func main() {
	coremain.Run()
}
