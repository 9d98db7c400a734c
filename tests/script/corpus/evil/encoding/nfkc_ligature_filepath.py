# expect: static attribute
# U+FB01 (the fi ligature) normalises to 'fi': this sets render.filepath
import bpy
bpy.context.scene.render.ﬁlepath = '@CANARY_DIR@/pwned-ligature'
