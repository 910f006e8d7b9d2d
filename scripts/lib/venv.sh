# compat_venv, shared by the scripts that run the Python clients (test.sh, checker.sh,
# cluster-lane.sh). Sourced. Makes the venv at tests/compat/.venv once and installs the
# requirement files given, each argument one pip install (e.g. "-r tests/compat/requirements.txt"
# or "--no-deps -r tests/compat/requirements-nodeps.txt"). Under a lock: two scripts started
# side by side (two checker runs at once) both found no venv, both ran `python3 -m venv`, and one
# failed on the other's half-made directory ("File exists").

compat_venv() { # pip-args...
  local root=${ROOT:-$PWD} spec
  mkdir -p "$root/tests/compat"
  (
    flock 9
    if [ ! -x "$root/tests/compat/.venv/bin/python" ]; then
      python3 -m venv "$root/tests/compat/.venv"
    fi
    for spec in "$@"; do
      # shellcheck disable=SC2086 # each spec is pip arguments, split on purpose
      "$root/tests/compat/.venv/bin/pip" install --quiet --disable-pip-version-check $spec
    done
  ) 9>"$root/tests/compat/.venv.lock"
}
