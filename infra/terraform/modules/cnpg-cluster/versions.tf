# Version constraints live in the root module's versions.tf; this only names the provider source so
# the module never falls back to an implicit provider address.
terraform {
  required_providers {
    kubernetes = {
      source = "hashicorp/kubernetes"
    }
  }
}
