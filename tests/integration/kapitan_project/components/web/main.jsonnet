// A deployment and a service from the target's parameters.
local kap = import "lib/kapitan.libjsonnet";
local inv = kap.inventory();
local p = inv.parameters;

{
  deployment: {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: p.app.name, namespace: p.namespace, labels: p.labels },
    spec: {
      replicas: p.app.replicas,
      template: {
        spec: {
          containers: [{
            name: p.app.name,
            image: p.app.image,
            ports: [{ containerPort: port } for port in p.app.ports],
            env: [{ name: k, value: p.app.env[k] } for k in std.objectFields(std.get(p.app, "env", {}))],
          }],
        },
      },
    },
  },
  service: {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: p.app.name, namespace: p.namespace },
    spec: { ports: [{ port: port } for port in p.app.ports] },
  },
  inventory: { classes: inv.classes, applications: inv.applications },
}
