# Provider and Terraform versions are pinned here (and only here) so every operator and CI run
# resolves the same plugins. Commit the generated .terraform.lock.hcl after the first `terraform init`.
terraform {
  # 1.6+ for `check` blocks and stable `optional()` object attributes.
  required_version = ">= 1.6.0, < 2.0.0"

  required_providers {
    kubernetes = {
      source = "hashicorp/kubernetes"
      # 2.36+ has kubernetes_manifest `wait.condition` and the *_v1/_v2 resources used here.
      version = "~> 2.36"
    }
    helm = {
      source = "hashicorp/helm"
      # The 2.x line still uses the nested `kubernetes {}` block in providers.tf; 3.x changed that syntax.
      version = "~> 2.17"
    }
  }
}
