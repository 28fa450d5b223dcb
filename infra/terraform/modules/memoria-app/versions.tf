# Version constraints live in the root module's versions.tf; this only names the provider source.
terraform {
  required_providers {
    kubernetes = {
      source = "hashicorp/kubernetes"
    }
  }
}
