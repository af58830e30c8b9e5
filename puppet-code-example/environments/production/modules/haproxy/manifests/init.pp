class haproxy (Integer $frontend_port, Integer $backend_port, Array[String] $backends) {
  notice("haproxy backends=${backends.join(',')} port=${backend_port}")
}
