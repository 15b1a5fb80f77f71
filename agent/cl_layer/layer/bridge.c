/* libprofcl_bridge.so: no code. Its dependencies, in this order, are
 * libprofcl_preload.so and libOpenCL.so.1 (mk/cl_layer.mk): a handle of it
 * resolves names to the preload shim first and to libOpenCL after (see
 * dlopen.c). */
static const char pcl_bridge_purpose[] __attribute__((used)) = "profcl bridge: preload shim, then libOpenCL.so.1";
