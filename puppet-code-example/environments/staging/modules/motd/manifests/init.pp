# The message of the day; the root group sets it for every node.
class motd (String $message) {
  notice("motd ${message}")
}
