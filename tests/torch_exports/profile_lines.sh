# The lines of profiles.txt (make_models.py) for the scripts that run them (torch_exports_test.sh,
# scripts/gpu-check.sh): "MODEL NAME:MIN,OPT,MAX[+NAME:...] RUN...", one spec per dynamic input.
# Sourced (POSIX sh); each function prints arguments for the kiln command line.

# profile_build_args SHAPES: one --shapes per input, for kiln build.
profile_build_args() {
  for spec in $(echo "$1" | tr '+' ' '); do printf ' --shapes %s' "$spec"; done
}

# profile_run_args SHAPES DIR RUN: --input NAME=DIR/RUN.NAME.npy per input, for kiln run.
profile_run_args() {
  for spec in $(echo "$1" | tr '+' ' '); do
    name=${spec%%:*}
    printf ' --input %s=%s/%s.%s.npy' "$name" "$2" "$3" "$name"
  done
}
