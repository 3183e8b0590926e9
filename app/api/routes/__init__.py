"""HTTP routes: one APIRouter per group of endpoints, plus the HTML pages."""
