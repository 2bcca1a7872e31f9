# Sourced by env.yml, as bashful's 12-share-variables sources example/scripts/setvar.sh.
export SOURCED=fromscript
