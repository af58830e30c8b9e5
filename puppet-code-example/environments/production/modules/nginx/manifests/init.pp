# Web servers; the nodes' reclass parameters (parameters:nginx) give the first three.
class nginx (
  Integer $worker_processes = 1,
  Integer $listen_port = 80,
  String $server_name = $facts['networking']['fqdn'],
  Integer $worker_connections = 512,
) {
  notice("nginx server_name=${server_name} workers=${worker_processes} port=${listen_port}")
  notice("nginx worker_connections=${worker_connections}")
}
