package cluster

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
)

// freePort asks the kernel for a free port on loopback.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// credentials writes the service-account key pair and a static token in system:masters (the
// apiserver's only user: the tests and the other daemons), and returns the token.
func credentials(pki string) (string, error) {
	if err := os.MkdirAll(pki, 0o700); err != nil {
		return "", err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return "", err
	}
	files := map[string][]byte{
		"sa.key": pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
		"sa.pub": pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}),
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	token := hex.EncodeToString(b)
	files["tokens.csv"] = []byte(token + ",admin,admin,system:masters\n")
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(pki, name), data, 0o600); err != nil {
			return "", err
		}
	}
	return token, nil
}

// kubeconfig is the file the controller-manager, the scheduler and the kubelet reach the
// apiserver with: loopback, the static token, the apiserver's self-signed certificate.
func kubeconfig(path, server, token string) error {
	return os.WriteFile(path, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: admin
  user: {token: %q}
contexts:
- name: local
  context: {cluster: local, user: admin}
current-context: local
`, server, token)), 0o600)
}

// etcdArgs: one member on loopback; fsync off, the data is thrown away with the test.
func etcdArgs(dir string, client, peer int) []string {
	c := "http://127.0.0.1:" + strconv.Itoa(client)
	p := "http://127.0.0.1:" + strconv.Itoa(peer)
	return []string{"--name", "local", "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", c, "--advertise-client-urls", c,
		"--listen-peer-urls", p, "--initial-advertise-peer-urls", p,
		"--initial-cluster", "local=" + p, "--listen-metrics-urls", "",
		"--unsafe-no-fsync", "--log-level", "warn"}
}

// apiserverArgs: loopback only, the static token, no ServiceAccount admission unless o asks
// (the Pods mount no token: the examples set automountServiceAccountToken: false anyway).
func apiserverArgs(dir string, etcd, port int, o Options) []string {
	pki := filepath.Join(dir, "pki")
	admission := []string{"--disable-admission-plugins", "ServiceAccount"}
	if o.ServiceAccounts {
		admission = nil
	}
	return append(admission, "--etcd-servers", "http://127.0.0.1:"+strconv.Itoa(etcd),
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", strconv.Itoa(port),
		"--cert-dir", pki, "--token-auth-file", filepath.Join(pki, "tokens.csv"),
		"--authorization-mode", "RBAC", "--allow-privileged=true",
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-account-key-file", filepath.Join(pki, "sa.pub"),
		"--service-account-signing-key-file", filepath.Join(pki, "sa.key"),
		"--service-cluster-ip-range", "10.0.0.0/24",
		// 1.37 refuses a loopback advertise address to the endpoint reconciler, which keeps the
		// kubernetes Service's endpoints: no Pod here reaches the apiserver through it.
		"--endpoint-reconciler-type", "none")
}

// controllerManagerArgs: the controllers a Job needs (job, podgc, garbagecollector for its
// Pods, ttl-after-finished for ttlSecondsAfterFinished, namespace for the tests' namespaces,
// nodelifecycle, which lifts the not-ready taint off the new node). No serving port. With
// o.ServiceAccounts, also each namespace's default ServiceAccount and the kube-root-ca.crt
// ConfigMap a token's volume mounts: the apiserver's self-signed certificate, whose file
// holds its CA too.
func controllerManagerArgs(dir, kubeconfig string, o Options) []string {
	controllers := "job,nodelifecycle,namespace,garbagecollector,ttl-after-finished,podgc"
	var ca []string
	if o.ServiceAccounts {
		controllers += ",serviceaccount,root-ca-cert-publisher"
		ca = []string{"--root-ca-file", filepath.Join(dir, "pki", "apiserver.crt")}
	}
	return append([]string{"--kubeconfig", kubeconfig, "--leader-elect=false",
		"--bind-address", "127.0.0.1", "--secure-port", "0", "--controllers", controllers}, ca...)
}

func schedulerArgs(kubeconfig string) []string {
	return []string{"--kubeconfig", kubeconfig,
		"--authentication-kubeconfig", kubeconfig, "--authorization-kubeconfig", kubeconfig,
		"--leader-elect=false", "--bind-address", "127.0.0.1", "--secure-port", "0"}
}
