# Sourced: exports what enables Arm's emulation layers (VK_ARM_data_graph,
# VK_ARM_tensors) on the Vulkan instances gpuu creates: LD_LIBRARY_PATH and
# VK_LAYER_PATH for the layers' files, GPUU_VULKAN_LAYERS for the order (graph
# first, then tensor). The layers' deploy folder is $LAYERS if set, else the one
# of the ai-ml-emulation-layer-for-vulkan package of the Python named by $1.
gpuu_layers=${LAYERS:-$("$1" -c "import emulation_layer, os; print(os.path.join(os.path.dirname(emulation_layer.__file__), 'deploy'))")}
export LD_LIBRARY_PATH=$gpuu_layers/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export VK_LAYER_PATH=$gpuu_layers/share/vulkan/explicit_layer.d
export GPUU_VULKAN_LAYERS=VK_LAYER_ML_Graph_Emulation,VK_LAYER_ML_Tensor_Emulation
