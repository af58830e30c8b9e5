# Prints, as JSON, the classes of every environment of a Puppet code directory with their
# parameters, read by Puppet's own parser through the service Puppet Server's
# environment_classes API uses (Puppet::InfoService.classes_per_environment).
#
# Usage: ruby puppet_classes.rb CODEDIR SCRATCHDIR
#   CODEDIR     holds environments/<env>/modules/<module>/manifests/**/*.pp
#   SCRATCHDIR  an empty directory for Puppet's confdir and vardir (nothing else is touched)
# Output: {"puppet_version": "...", "environments": {env: {file: {"classes": [...]} or
#          {"error": "..."}}}}
require 'json'

codedir, scratch = ARGV
begin
  require 'puppet'
rescue LoadError => e
  STDERR.puts "cannot load Puppet's Ruby library: #{e.message}"
  exit 3
end
Puppet.initialize_settings([
  '--confdir', File.join(scratch, 'conf'), '--vardir', File.join(scratch, 'var'),
  '--codedir', codedir, '--environmentpath', File.join(codedir, 'environments'),
  '--certname', 'reclass-ng-class-sync', '--log_level', 'err',
])
require 'puppet/info_service'

files_by_environment = {}
Dir.glob(File.join(codedir, 'environments', '*')).sort.each do |dir|
  next unless File.directory?(dir)
  name = File.basename(dir)
  next if name.start_with?('.')
  files_by_environment[name] =
    Dir.glob(File.join(dir, 'modules', '*', 'manifests', '**', '*.pp')).sort
end
result = files_by_environment.empty? ? {} :
  Puppet::InfoService.classes_per_environment(files_by_environment)
puts JSON.generate({ 'puppet_version' => Puppet.version, 'environments' => result })
