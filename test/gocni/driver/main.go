// Command driver drives a CNI plugin the way containerd's CRI does, through containerd's own CNI library
// (github.com/containerd/go-cni over libcni): it loads the network configuration from a conf dir, then runs one
// verb against a sandbox — Setup with the portMappings and dns capability arguments and the K8S_* labels CRI passes,
// Check, or Remove. Built offline from Debian's packages (golang-github-containerd-go-cni-dev):
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go build -o driver ./test/gocni/driver
//	GOOS=windows GO111MODULE=off GOPATH=/usr/share/gocode go build -o driver.exe ./test/gocni/driver
//
// Usage: driver -confdir DIR -bindir DIR[,DIR] -id ID -netns NS -verb setup|check|remove [-portmap JSON]
// [-dns JSON] [-mac MAC]. Setup prints {"interfaces":…,"dns":…,"raw":[<CNI results>]} on stdout; the others print
// nothing. Errors go to stderr with exit code 1.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	gocni "github.com/containerd/go-cni"
)

func main() {
	confDir := flag.String("confdir", "", "CNI configuration directory (the first file in lexical order is used)")
	binDirs := flag.String("bindir", "", "comma-separated CNI plugin directories")
	id := flag.String("id", "", "sandbox (container) id")
	netns := flag.String("netns", "", "network namespace: an HCN namespace GUID, or none")
	verb := flag.String("verb", "", "setup, check or remove")
	portmap := flag.String("portmap", "", "JSON list of go-cni PortMapping")
	dnsArg := flag.String("dns", "", "JSON go-cni DNS")
	mac := flag.String("mac", "", "the mac capability argument (a delegated NIC)")
	flag.Parse()

	// What containerd's CRI sets up (pkg/cri/server: WithMinNetworkCount, WithPluginConfDir, WithPluginDir,
	// WithInterfacePrefix "eth"; Load with WithDefaultConf; no loopback network on Windows).
	cni, err := gocni.New(
		gocni.WithMinNetworkCount(1),
		gocni.WithPluginConfDir(*confDir),
		gocni.WithPluginDir(strings.Split(*binDirs, ",")),
		gocni.WithInterfacePrefix("eth"),
	)
	if err != nil {
		fail("new: %v", err)
	}
	if err := cni.Load(gocni.WithDefaultConf); err != nil {
		fail("load: %v", err)
	}
	if err := cni.Status(); err != nil {
		fail("status: %v", err)
	}

	// CRI's labels (toCNILabels) and capability arguments.
	opts := []gocni.NamespaceOpts{
		gocni.WithLabels(map[string]string{
			"K8S_POD_NAMESPACE":          "default",
			"K8S_POD_NAME":               "pod-" + *id,
			"K8S_POD_INFRA_CONTAINER_ID": *id,
			"K8S_POD_UID":                "uid-" + *id,
			"IgnoreUnknown":              "1",
		}),
	}
	if *portmap != "" {
		var pm []gocni.PortMapping
		if err := json.Unmarshal([]byte(*portmap), &pm); err != nil {
			fail("portmap: %v", err)
		}
		opts = append(opts, gocni.WithCapabilityPortMap(pm))
	}
	if *dnsArg != "" {
		var dns gocni.DNS
		if err := json.Unmarshal([]byte(*dnsArg), &dns); err != nil {
			fail("dns: %v", err)
		}
		opts = append(opts, gocni.WithCapabilityDNS(dns))
	}
	if *mac != "" {
		opts = append(opts, gocni.WithCapability("mac", *mac))
	}

	ctx := context.Background()
	switch *verb {
	case "setup":
		result, err := cni.Setup(ctx, *id, *netns, opts...)
		if err != nil {
			fail("setup: %v", err)
		}
		out, err := json.Marshal(map[string]interface{}{
			"interfaces": result.Interfaces,
			"dns":        result.DNS,
			"routes":     result.Routes,
			"raw":        result.Raw(),
		})
		if err != nil {
			fail("marshal: %v", err)
		}
		fmt.Println(string(out))
	case "check":
		if err := cni.Check(ctx, *id, *netns, opts...); err != nil {
			fail("check: %v", err)
		}
	case "remove":
		if err := cni.Remove(ctx, *id, *netns, opts...); err != nil {
			fail("remove: %v", err)
		}
	default:
		fail("unknown verb %q", *verb)
	}
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}
