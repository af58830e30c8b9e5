class ntp (Array[String] $servers, Boolean $iburst = true) {
  notice("ntp servers=${servers.join(',')} iburst=${iburst}")
}
