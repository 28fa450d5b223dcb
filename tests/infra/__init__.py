"""Structure tests of infra/terraform, the Dockerfile and the CI infra checks."""
