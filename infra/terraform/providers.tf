# Both providers talk to the same cluster. Point them at a kubeconfig (and optionally a context);
# for CI/CD runners that use in-cluster or exec-based auth, replace these blocks in a wrapper module.
provider "kubernetes" {
  config_path    = var.kubeconfig_path
  config_context = var.kube_context
}

provider "helm" {
  kubernetes {
    config_path    = var.kubeconfig_path
    config_context = var.kube_context
  }
}
