# Nightly backups: the time is required, how long to keep them is not.
class postgresql_backup (String $start_time, Integer $keep_days = 7) {
  notice("postgresql_backup at ${start_time}, kept ${keep_days} days")
}
