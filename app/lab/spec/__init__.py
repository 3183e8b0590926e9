"""Request specs checked at the edge: the validated bodies (`specs`) and the checks that
refuse a body in words a student understands (`checks`)."""
