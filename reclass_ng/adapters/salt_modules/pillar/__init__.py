"""Salt ext_pillar modules of reclass-ng (see reclass_ng.adapters.salt_modules)."""
