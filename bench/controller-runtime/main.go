// A Memcached operator on controller-runtime, at its defaults, written for the benchmarks the way
// kubebuilder and operator-sdk scaffold one: a typed API, a reconciler that makes one Deployment
// per Memcached (owned, so its changes come back as reconciles), and a status with conditions.
// It is the peer `npm run bench` measures our reconciler against, never code of the kit. With
// --equal-work the same binary runs equal_work.go's reconciler instead: one that does the work
// ours does (the same Deployment, a Pod cache, the same status and Events).
//
// The kind lives in its own group (cache.bench.example.com) so it shares the control plane with
// the kit's Memcached without either controller seeing the other's objects.
package main

import (
	"context"
	"flag"
	"os"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// The API (api/v1alpha1 in a kubebuilder project).

var groupVersion = schema.GroupVersion{Group: "cache.bench.example.com", Version: "v1alpha1"}

type MemcachedSpec struct {
	Size int32 `json:"size"`
}

type MemcachedStatus struct {
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
	AvailableReplicas  int32              `json:"availableReplicas,omitempty"`
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	// The equal-work peer's (equal_work.go), as our Memcached's status has them.
	Nodes         []string `json:"nodes,omitempty"`
	Replicas      int32    `json:"replicas,omitempty"`
	ReadyReplicas int32    `json:"readyReplicas,omitempty"`
}

// +kubebuilder:resource:path=benchmemcacheds,singular=benchmemcached
// (names of its own: see crd.yaml)
type Memcached struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              MemcachedSpec   `json:"spec,omitempty"`
	Status            MemcachedStatus `json:"status,omitempty"`
}

type MemcachedList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Memcached `json:"items"`
}

// What controller-gen writes to zz_generated.deepcopy.go.

func (in *Memcached) DeepCopyInto(out *Memcached) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec = in.Spec
	out.Status = in.Status
	out.Status.Nodes = slices.Clone(in.Status.Nodes)
	if in.Status.Conditions != nil {
		out.Status.Conditions = make([]metav1.Condition, len(in.Status.Conditions))
		for i := range in.Status.Conditions {
			in.Status.Conditions[i].DeepCopyInto(&out.Status.Conditions[i])
		}
	}
}

func (in *Memcached) DeepCopy() *Memcached {
	if in == nil {
		return nil
	}
	out := new(Memcached)
	in.DeepCopyInto(out)
	return out
}

func (in *Memcached) DeepCopyObject() runtime.Object { return in.DeepCopy() }

func (in *MemcachedList) DeepCopyObject() runtime.Object {
	if in == nil {
		return nil
	}
	out := new(MemcachedList)
	*out = *in
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]Memcached, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

// The controller (internal/controller in a kubebuilder project).

type MemcachedReconciler struct {
	client.Client
	Scheme *runtime.Scheme
}

func (r *MemcachedReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	memcached := &Memcached{}
	if err := r.Get(ctx, req.NamespacedName, memcached); err != nil {
		// Deleted: its Deployment goes with it (owner reference).
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	deployment := &appsv1.Deployment{}
	err := r.Get(ctx, req.NamespacedName, deployment)
	if apierrors.IsNotFound(err) {
		deployment, err = r.deploymentFor(memcached)
		if err != nil {
			return ctrl.Result{}, err
		}
		if err := r.Create(ctx, deployment); err != nil {
			return ctrl.Result{}, err
		}
		// Its status is filled in when the Deployment's own events bring the Memcached back.
		return ctrl.Result{}, nil
	} else if err != nil {
		return ctrl.Result{}, err
	}

	if ptr.Deref(deployment.Spec.Replicas, 1) != memcached.Spec.Size {
		deployment.Spec.Replicas = ptr.To(memcached.Spec.Size)
		if err := r.Update(ctx, deployment); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, nil
	}

	status := memcached.DeepCopy().Status
	status.AvailableReplicas = deployment.Status.AvailableReplicas
	status.ObservedGeneration = memcached.Generation
	available := metav1.Condition{
		Type:               "Available",
		Status:             metav1.ConditionFalse,
		Reason:             "Reconciling",
		Message:            "waiting for the Deployment's pods",
		ObservedGeneration: memcached.Generation,
	}
	if deployment.Status.AvailableReplicas == memcached.Spec.Size {
		available.Status, available.Reason, available.Message = metav1.ConditionTrue, "Reconciled", "all pods available"
	}
	meta.SetStatusCondition(&status.Conditions, available)
	if status.AvailableReplicas == memcached.Status.AvailableReplicas &&
		status.ObservedGeneration == memcached.Status.ObservedGeneration &&
		meta.IsStatusConditionPresentAndEqual(memcached.Status.Conditions, "Available", available.Status) {
		return ctrl.Result{}, nil
	}
	memcached.Status = status
	return ctrl.Result{}, r.Status().Update(ctx, memcached)
}

func (r *MemcachedReconciler) deploymentFor(m *Memcached) (*appsv1.Deployment, error) {
	labels := map[string]string{"app.kubernetes.io/name": "memcached", "app.kubernetes.io/instance": m.Name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(m.Spec.Size),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:    "memcached",
						Image:   "memcached:1.6",
						Command: []string{"memcached", "--memory-limit=64", "-o", "modern", "-v"},
						Ports:   []corev1.ContainerPort{{ContainerPort: 11211, Name: "memcached"}},
						SecurityContext: &corev1.SecurityContext{
							RunAsUser:                ptr.To[int64](1001),
							AllowPrivilegeEscalation: ptr.To(false),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
					}},
				},
			},
		},
	}
	if err := ctrl.SetControllerReference(m, d, r.Scheme); err != nil {
		return nil, err
	}
	return d, nil
}

func (r *MemcachedReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(&Memcached{}).Owns(&appsv1.Deployment{}).Named("memcached").Complete(r)
}

// cmd/main.go.

func main() {
	var metricsAddr, probeAddr, namespace, deploymentTemplate string
	var equalWork, leaderElect bool
	flag.StringVar(&metricsAddr, "metrics-bind-address", "0", "The address the metrics endpoint binds to; 0 disables it.")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "The address the probe endpoint binds to.")
	flag.StringVar(&namespace, "namespace", "", "Watch only this namespace (all when empty).")
	flag.BoolVar(&equalWork, "equal-work", false, "Do what the kit's Memcached reconciler does (equal_work.go), not kubebuilder's lean shape.")
	flag.StringVar(&deploymentTemplate, "deployment-template", "", "With --equal-work: the Deployment to make for each Memcached, as JSON with __NAME__ and __NAMESPACE__.")
	flag.BoolVar(&leaderElect, "leader-elect", false, "Elect one active replica through a Lease in --namespace, as kubebuilder scaffolds it.")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	setupLog := ctrl.Log.WithName("setup")

	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	builder := &scheme.Builder{GroupVersion: groupVersion}
	builder.Register(&Memcached{}, &MemcachedList{})
	if err := builder.AddToScheme(s); err != nil {
		panic(err)
	}

	cacheOptions := cache.Options{}
	if namespace != "" {
		cacheOptions.DefaultNamespaces = map[string]cache.Config{namespace: {}}
	}
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                  s,
		Metrics:                 metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress:  probeAddr,
		Cache:                   cacheOptions,
		LeaderElection:          leaderElect,
		LeaderElectionID:        "memcached-peer.bench.example.com",
		LeaderElectionNamespace: namespace,
	})
	if err != nil {
		setupLog.Error(err, "unable to create the manager")
		os.Exit(1)
	}
	if equalWork {
		template, err := os.ReadFile(deploymentTemplate)
		if err != nil {
			setupLog.Error(err, "--equal-work needs --deployment-template")
			os.Exit(1)
		}
		r := &EqualWorkReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("memcached-controller"), Template: template}
		if err := r.SetupWithManager(mgr); err != nil {
			setupLog.Error(err, "unable to create the controller")
			os.Exit(1)
		}
	} else if err := (&MemcachedReconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme()}).SetupWithManager(mgr); err != nil {
		setupLog.Error(err, "unable to create the controller")
		os.Exit(1)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		os.Exit(1)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		os.Exit(1)
	}
	setupLog.Info("starting manager")
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		setupLog.Error(err, "problem running the manager")
		os.Exit(1)
	}
}
