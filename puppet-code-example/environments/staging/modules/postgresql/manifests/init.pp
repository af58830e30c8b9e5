class postgresql (Integer $version, Integer $port = 5432, Array[String] $listen_addresses = ['localhost'],
                  Array[String] $databases = []) {
  notice("postgresql ${version} listen=${listen_addresses.join(',')}")
}
