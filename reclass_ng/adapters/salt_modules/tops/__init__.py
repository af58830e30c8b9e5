"""Salt master_tops modules of reclass-ng (see reclass_ng.adapters.salt_modules)."""
