# Sourced by the scripts that run a Java server (Keycloak, Apicurio Registry): finds a Java 21 or newer.

java_major() {
  "$1/bin/java" -XshowSettings:properties -version 2>&1 |
    sed -n 's/^ *java\.specification\.version = \([0-9]*\).*/\1/p'
}

# The first candidate with Java 21 or newer wins: the caller's own override first, then JAVA_HOME, then the JDKs
# installed under /usr/lib/jvm (the machine's JDK 25 before the others).
find_java_home() {
  local candidate
  for candidate in "${1:-}" "${JAVA_HOME:-}" /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/*; do
    [[ -n "$candidate" && -x "$candidate/bin/java" ]] || continue
    local major
    major="$(java_major "$candidate")"
    if [[ -n "$major" && "$major" -ge 21 ]]; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}
