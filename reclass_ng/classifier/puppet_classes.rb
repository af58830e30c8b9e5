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

# Puppet's parser reads a manifest with a plain open: a FIFO would block it until the sync's
# timeout, /dev/zero would be read without end. Only regular files of at most MAX_MANIFEST_BYTES
# are handed to it; any other is that file's error (File.file? and File.size follow a link).
MAX_MANIFEST_BYTES = 4 * 1024 * 1024
NOT_REGULAR = 'not a regular file (a FIFO, device or socket); only regular files are read'
files_by_environment = {}
refused = Hash.new { |hash, key| hash[key] = {} }
Dir.glob(File.join(codedir, 'environments', '*')).sort.each do |dir|
  next unless File.directory?(dir)
  name = File.basename(dir)
  next if name.start_with?('.')
  files = Dir.glob(File.join(dir, 'modules', '*', 'manifests', '**', '*.pp')).sort
  files_by_environment[name] = files.select do |file|
    problem = if !File.file?(file) then NOT_REGULAR
              elsif File.size(file) > MAX_MANIFEST_BYTES
                "#{File.size(file)} bytes, more than the limit of #{MAX_MANIFEST_BYTES}"
              end
    refused[name][file] = { 'error' => problem } if problem
    problem.nil?
  end
end
result = files_by_environment.empty? ? {} :
  Puppet::InfoService.classes_per_environment(files_by_environment)
refused.each { |name, errors| (result[name] ||= {}).merge!(errors) }
puts JSON.generate({ 'puppet_version' => Puppet.version, 'environments' => result })
