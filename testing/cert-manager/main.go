// cert-manager-controller: the certificate controllers of cert-manager's published Go module, run
// as one process against a test's API server, so the kit's cert-manager integration (an
// EtcdCluster's spec.tls.issuerRef) is tested against cert-manager itself. The module proxy
// serves cert-manager's library module but not its cmd/controller module, so this is the small
// main that starts its registered controllers: Certificates (trigger, key manager, request
// manager, issuing, readiness, revision manager), the internal approver, Issuers and
// ClusterIssuers, and the CA and self-signed issuers. No ACME, Vault or Venafi; no webhook (the
// tests create only valid objects); no leader election (one replica per control plane).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"sync"
	"syscall"

	controllerpkg "github.com/cert-manager/cert-manager/pkg/controller"
	logf "github.com/cert-manager/cert-manager/pkg/logs"

	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "the kubeconfig of the API server to serve")
	clusterResourceNamespace := flag.String("cluster-resource-namespace", "cert-manager",
		"where a ClusterIssuer's Secrets are read from")
	namespace := flag.String("namespace", "", "the only namespace to serve (a test's own); empty: all")
	ownerRef := flag.Bool("enable-certificate-owner-ref", false,
		"a Certificate's Secret is owned by the Certificate (deleted with it)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx = logf.NewContext(ctx, logf.Log, "cert-manager-controller")

	factory, err := controllerpkg.NewContextFactory(ctx, controllerpkg.ContextOptions{
		Kubeconfig:         *kubeconfig,
		Namespace:          *namespace,
		KubernetesAPIQPS:   50,
		KubernetesAPIBurst: 100,
		IssuerOptions:      controllerpkg.IssuerOptions{ClusterResourceNamespace: *clusterResourceNamespace},
		CertificateOptions: controllerpkg.CertificateOptions{EnableOwnerRef: *ownerRef},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "cert-manager-controller: %v\n", err)
		os.Exit(1)
	}

	names := make([]string, 0, len(controllerpkg.Known()))
	for name := range controllerpkg.Known() {
		names = append(names, name)
	}
	sort.Strings(names)
	var running sync.WaitGroup
	started := []string{}
	for _, name := range names {
		// A namespaced cert-manager serves no ClusterIssuer (cert-manager's own rule).
		if *namespace != "" && name == "clusterissuers" {
			continue
		}
		controller, err := controllerpkg.Known()[name](factory)
		if err != nil {
			fmt.Fprintf(os.Stderr, "cert-manager-controller: %s: %v\n", name, err)
			os.Exit(1)
		}
		started = append(started, name)
		running.Add(1)
		go func(name string, controller controllerpkg.Interface) {
			defer running.Done()
			if err := controller.Run(2, ctx); err != nil {
				fmt.Fprintf(os.Stderr, "cert-manager-controller: %s stopped: %v\n", name, err)
				os.Exit(1)
			}
		}(name, controller)
	}

	// Every Context a factory builds shares its informer factories: started once, after each
	// controller asked for its informers.
	shared, err := factory.Build("informers")
	if err != nil {
		fmt.Fprintf(os.Stderr, "cert-manager-controller: %v\n", err)
		os.Exit(1)
	}
	shared.SharedInformerFactory.Start(ctx.Done())
	shared.KubeSharedInformerFactory.Start(ctx.Done())
	fmt.Fprintf(os.Stderr, "cert-manager-controller: running %v\n", started)
	running.Wait()
}
